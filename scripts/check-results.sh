#!/usr/bin/env bash
# Every run file docs/results/README.md names (`YYYY-MM-DD/NAME`, with or without `.txt`)
# exists under docs/results/: a row cannot quote a file that is not on record.
set -euo pipefail
cd "$(dirname "$0")/../docs/results"
missing=0
for ref in $(grep -oE '20[0-9]{2}-[0-9]{2}-[0-9]{2}/[A-Za-z0-9._-]+' README.md | sed 's/[.,]$//' | sort -u); do
    if [ ! -e "$ref" ] && [ ! -e "$ref.txt" ] && [ ! -e "${ref%.txt}" ]; then
        echo "docs/results/README.md names $ref, which is not on record" >&2
        missing=$((missing + 1))
    fi
done
[ "$missing" = 0 ] && echo "check-results: every run file named is on record"
[ "$missing" = 0 ]
