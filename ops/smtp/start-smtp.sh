#!/usr/bin/env bash
# Installs aiosmtpd (PyPI) if this Python lacks it, then runs ops/smtp/smtp_sink.py in the
# foreground with the given arguments: a real SMTP server on 127.0.0.1 that stores each message as
# a file. Used by tests/pipeline/notify_smtp.rs; by hand:
#   ops/smtp/start-smtp.sh --port 2525 --dir /tmp/mail
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python="${PYTHON:-python3}"
if ! "$python" -c "import aiosmtpd" 2>/dev/null; then
    # Debian's own Python refuses system-wide pip installs without the flag; pyenv's does not know it.
    "$python" -m pip install --quiet aiosmtpd 2>/dev/null \
        || "$python" -m pip install --quiet --break-system-packages aiosmtpd
fi
exec "$python" "$here/smtp_sink.py" "$@"
