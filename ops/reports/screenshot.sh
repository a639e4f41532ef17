#!/bin/sh
# Screenshots of report pages in headless Chromium, for a person to look at: the layout, the
# charts and the colours, which the test suite's HTML checks cannot judge.
#
#   ops/reports/screenshot.sh PAGE.html [PAGE.html ...]   -> PAGE.png beside each page
#
# Installs Debian's chromium when it is missing (as root). Chromium runs with no network use of
# its own (background networking, sync and updates off: this cluster's network is closed), a
# fresh profile, and reads the page from disk, as a user who opens the report folder would.
set -eu
if [ $# -eq 0 ]; then
    echo "usage: $0 PAGE.html [PAGE.html ...]" >&2
    exit 2
fi
if ! command -v chromium >/dev/null 2>&1; then
    echo "installing chromium (Debian package)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null
fi
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
for page in "$@"; do
    png="${page%.html}.png"
    chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$profile" --hide-scrollbars --window-size=1200,2400 \
        --screenshot="$png" "file://$(realpath "$page")" 2>/dev/null
    echo "$png"
done
