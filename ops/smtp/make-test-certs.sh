#!/usr/bin/env bash
# Makes a throw-away CA and a certificate for localhost / 127.0.0.1 signed by it, in DIR:
# ca.pem (give it to jobsight as notify.smtp.ca_file), cert.pem and key.pem (for smtp_sink.py).
# For the TLS tests of tests/pipeline/notify_smtp.rs; never for a real server.
set -euo pipefail
dir="${1:?usage: make-test-certs.sh DIR}"
mkdir -p "$dir"
cd "$dir"
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 \
    -subj "/CN=jobsight test CA" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -keyout key.pem -out cert.csr -subj "/CN=localhost" 2>/dev/null
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' > ext.cnf
openssl x509 -req -in cert.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out cert.pem -days 2 \
    -extfile ext.cnf 2>/dev/null
