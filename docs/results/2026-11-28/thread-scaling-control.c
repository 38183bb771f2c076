// Control for thread scaling on this VM: T threads doing independent work, no shared writes.
// Each thread times its own loop after a barrier (set-up excluded); rate = T * iters / slowest.
// mode 0: arithmetic in registers; mode 1: dependent random reads in a private 256 MiB array.
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static int mode; static long iters; static pthread_barrier_t bar; static double secs_max; static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static void *work(void *arg) {
  uint64_t x = (uint64_t)(uintptr_t)arg * 0x9E3779B97F4A7C15ull + 1, acc = 0;
  struct timespec s, e;
  if (mode == 0) { pthread_barrier_wait(&bar); clock_gettime(CLOCK_MONOTONIC, &s); for (long i = 0; i < iters; i++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; acc += x; } }
  else { size_t n = (256u << 20) / 8; uint64_t *a = malloc(n * 8); for (size_t i = 0; i < n; i++) a[i] = i * 0x9E3779B97F4A7C15ull;
    pthread_barrier_wait(&bar); clock_gettime(CLOCK_MONOTONIC, &s);
    size_t p = 1; for (long i = 0; i < iters; i++) { p = (a[p] ^ x) % n; x += p; acc += p; } free(a); }
  clock_gettime(CLOCK_MONOTONIC, &e);
  double d = (e.tv_sec - s.tv_sec) + (e.tv_nsec - s.tv_nsec) / 1e9;
  pthread_mutex_lock(&mu); if (d > secs_max) secs_max = d; pthread_mutex_unlock(&mu);
  return (void *)(uintptr_t)acc;
}
int main(int argc, char **argv) {
  int t = atoi(argv[1]); mode = atoi(argv[2]); iters = atol(argv[3]);
  pthread_t th[8]; pthread_barrier_init(&bar, 0, t);
  for (int i = 0; i < t; i++) pthread_create(&th[i], 0, work, (void *)(uintptr_t)(i + 1));
  for (int i = 0; i < t; i++) pthread_join(th[i], 0);
  printf("%.0f\n", t * (double)iters / secs_max);
  return 0;
}
