#!/bin/sh
# Makes the certificates of a durable-agent Temporal cluster with openssl, once (an existing
# server.pem is kept): a CA, the frontend's certificate signed by it, and a client certificate for
# mTLS. Used by the cluster test (scripts/cluster/) and by docker-compose.yml's `certs` service.
#
#   deploy/tls/make-certs.sh DIR [DNS-NAME…]     (default names: temporal localhost; IP 127.0.0.1)
#
# DIR/ca.pem            the CA clients trust (TEMPORAL_TLS_SERVER_CA_CERT_PATH; the server's TLS_CA)
# DIR/server.pem, .key  the frontend's certificate (TLS_CERT, TLS_KEY), for serverAuth and clientAuth
# DIR/client.pem, .key  a client certificate for mTLS (TEMPORAL_TLS_CLIENT_CERT_PATH / _KEY_PATH)
# CERTS_OWNER=uid:gid   chown the files (compose: the server and worker images run as uid 1000)
# CERTS_DAYS            validity in days (default 825)
set -eu
dir=${1:?usage: make-certs.sh DIR [DNS-NAME…]}
shift
[ $# -gt 0 ] || set -- temporal localhost
days=${CERTS_DAYS:-825}
mkdir -p "$dir"
if [ -s "$dir/server.pem" ]; then
  echo "certificates already in $dir"
  exit 0
fi
umask 077
san="IP:127.0.0.1"
for name in "$@"; do san="$san,DNS:$name"; done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days "$days" \
  -subj "/CN=durable-agent Temporal CA" -keyout "$dir/ca.key" -out "$dir/ca.pem" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null

sign() { # name CN extendedKeyUsage [subjectAltName]
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$2" \
    -keyout "$dir/$1.key" -out "$tmp/$1.csr" 2>/dev/null
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$3"
    [ -z "${4:-}" ] || echo "subjectAltName=$4"
  } >"$tmp/$1.ext"
  openssl x509 -req -in "$tmp/$1.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial \
    -days "$days" -extfile "$tmp/$1.ext" -out "$dir/$1.pem" 2>/dev/null
}
sign server "$1" serverAuth,clientAuth "$san"
sign client durable-agent-client clientAuth
rm -f "$dir/ca.srl"
chmod 644 "$dir"/*.pem
chmod 640 "$dir"/*.key
[ -z "${CERTS_OWNER:-}" ] || chown "$CERTS_OWNER" "$dir"/*.pem "$dir"/*.key
echo "certificates written to $dir (server names: $*)"
