#!/usr/bin/env bash
# The product's texts speak to their readers, not to the project's bookkeeping: no source
# file, test, script or document names an issue, a session or a helper (an issue or a
# session by number, "this session's code", the run of a helper). Run by CI; prints every hit as
# file:line:text and exits 1 if there is one.
#
# Searched: every text file git tracks under crates/, fuzz/ (not its corpora), scripts/
# and docs/, and the top-level README.md and DESIGN.md. Left out: the dated run folders
# (docs/results/YYYY-MM-DD/): they hold what older builds printed (some notes of which
# named the bars they were written to meet), kept verbatim as the record a figure was read
# from; rewriting them would change the record. The `#` lines people added above the
# output follow these rules, and docs/results/README.md, which quotes the runs, is
# searched. Left out too: this script, which has to spell the patterns.
#
# The patterns aim at numbered or ticket uses only, so ordinary words pass: "issue a read",
# the Redis server's `Session` and a client's sessions, "a helper function".
set -euo pipefail
cd "$(dirname "$0")/.."

patterns=(
    '\bissues?[ -]?#?[0-9]'                                  # an issue by number, or a range, or #N
    '\bsessions?[ -]?#?[0-9]'                                # a session by number
    '\bthis session\b'
    '\b(previous|next|earlier|last|later|same|another) session\b'
    "\\bthe session's (final |own )?(code|changes|work|run|build)"
    "\\bhelper's\\b"                                          # whose experiment it was
    '\ba helper\b(?! (fn|function|method|type|struct|trait|module|macro|that|to|for|which|of))'
    '\bhelpers? (session|worktree|branch)'
)
regex=$(IFS='|'; echo "${patterns[*]}")

mapfile -t files < <(
    git ls-files -- crates fuzz scripts docs README.md DESIGN.md \
        | grep -Ev '^docs/results/[0-9]{4}-[0-9]{2}-[0-9]{2}/' \
        | grep -Ev '^scripts/check-words\.sh$' \
        | grep -Ev '^fuzz/(corpus|regressions|artifacts)/' \
        | grep -Ev '\.(svg|csv|png|json|lock)$'
)

if hits=$(grep -nHIiP -- "$regex" "${files[@]}"); then
    echo "Texts that name an issue, a session or a helper (say what the code does instead):"
    echo "$hits"
    exit 1
fi
echo "check-words: ${#files[@]} files, no issue, session or helper named"
