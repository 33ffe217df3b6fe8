#!/bin/sh
# Makes the certificates the TLS tests and scripts/bench_control.py use, in DIR
# (created if missing), with the openssl CLI: two CAs (ca, other-ca), a server
# certificate of ca for 127.0.0.1 and localhost (server), a client certificate
# of ca (client) and one of other-ca (stranger); NAME.crt and NAME.key each,
# P-256 keys, valid two days. For tests only: the keys are not encrypted.
#
#   scripts/make_test_certs.sh DIR
set -e
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
mkdir -p "$1"
cd "$1"
ca() {
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$1.key" -out "$1.crt" -days 2 -subj "/CN=$1"
}
leaf() {
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$1.key" \
    -out "$1.csr" -subj "/CN=$1"
  printf 'subjectAltName=%s\n' "$3" > "$1.ext"
  openssl x509 -req -in "$1.csr" -CA "$2.crt" -CAkey "$2.key" -CAcreateserial \
    -out "$1.crt" -days 2 -extfile "$1.ext"
}
{
  ca ca
  ca other-ca
  leaf server ca "IP:127.0.0.1,DNS:localhost"
  leaf client ca "DNS:client"
  leaf stranger other-ca "DNS:stranger"
} > openssl.log 2>&1 || { cat openssl.log >&2; exit 1; }
