#!/bin/sh
# Measures the bounds SECURITY.md states for hostile stores, with the
# security probe's reproductions (field sizes, decode memory, decoded bytes
# per read, many tiny messages): wall and CPU seconds, peak RSS
# (/usr/bin/time), output and cache file sizes of the real binary.
#
#   bench/hostile.sh [DSH_LSP_BINARY]     (needs python3, zstd, /usr/bin/time)
#
# Everything is generated under a temporary directory, removed at the end.
set -eu
BIN=${1:-}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
if [ -z "$BIN" ]; then
	BIN=$W/dsh-lsp
	go build -o "$BIN" ./cmd/dsh-lsp
fi
run() { # label, env..., -- args...
	label=$1
	shift
	env "$@" >"$W/out" 2>"$W/err" || true
	printf '%-58s %s; stdout %s bytes\n' "$label" "$(tail -1 "$W/err")" "$(wc -c <"$W/out")"
}
T='/usr/bin/time -f %e_s_wall,_%U+%S_s_cpu,_%M_KiB_peak'

# N1: four sessions whose title is 100 MiB (9.8 KB of zstd each).
S=$W/titles
for i in 0 1 2 3; do
	D="$S/--home-alice-proj--/big-$i"
	mkdir -p "$D"
	{
		echo '{"type":"session","version":0,"id":"big-'$i'","createdAt":1786000000000,"cwd":"/home/alice/proj","delegationDepth":0}' | zstd -q -c
		python3 -c 'import sys; sys.stdout.buffer.write(b"{\"type\":\"session/title\",\"seq\":0,\"time\":1,\"data\":{\"title\":\"" + b"title-injection " * (100 << 16) + b"\",\"messageSeqs\":[],\"source\":{\"kind\":\"fallback\"}}}\n")' | zstd -q -c -1
	} >"$D/session.jsonl.zstd"
done
run "N1 4 x 100 MiB titles: candidates (no cache)" XDG_CACHE_HOME=$W/c1 $T "$BIN" candidates --sessions "$S"
echo "   cache file: $(cat $W/c1/dsh-lsp/index-* | wc -c) bytes"
run "N1 4 x 100 MiB titles: candidates (cache)" XDG_CACHE_HOME=$W/c1 $T "$BIN" candidates --sessions "$S"

# N1: 300 headers with a 1 MiB cwd (zstd -19 header frames).
S=$W/cwds
python3 - "$S" <<'EOF'
import os, subprocess, sys
root = sys.argv[1]
cwd = '/' + 'd' * ((1 << 20) - 200)
for i in range(300):
    d = os.path.join(root, '--' + ('d' * 251) + '--', 'c%d' % i); os.makedirs(d, exist_ok=True)
    h = ('{"type":"session","version":0,"id":"c%d","createdAt":1,"cwd":"%s","delegationDepth":0}\n' % (i, cwd)).encode()
    open(os.path.join(d, 'session.jsonl.zstd'), 'wb').write(subprocess.run(['zstd', '-q', '-c', '-19'], input=h, stdout=subprocess.PIPE, check=True).stdout)
EOF
run "N1 300 headers with a 1 MiB cwd: candidates" XDG_CACHE_HOME=$W/c2 $T "$BIN" candidates --sessions "$S"
echo "   cache file: $(cat $W/c2/dsh-lsp/index-* | wc -c) bytes"

# N2: 32 compressed-block bombs (a 900 MiB message, 86 KB each).
S=$W/bombs
python3 - "$S" 32 <<'EOF'
import os, subprocess, sys, threading
root, n = sys.argv[1], int(sys.argv[2])
z = lambda b: subprocess.run(['zstd', '-q', '-c'], input=b, stdout=subprocess.PIPE, check=True).stdout
p = subprocess.Popen(['zstd', '-q', '-c', '-3'], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
out = []; t = threading.Thread(target=lambda: out.append(p.stdout.read())); t.start()
p.stdin.write(b'{"type":"user/message","seq":0,"time":1,"data":{"content":[{"type":"text","text":"')
for _ in range(900): p.stdin.write(b'abcdefghijklmnopqrstuvwxyz012345' * 32768)
p.stdin.write(b'"}],"source":{"kind":"user"},"role":"user","id":"m0"},"surfaceOp":"append"}\n'); p.stdin.close(); t.join()
for k in range(n):
    d = os.path.join(root, '--home-alice-proj--', 'bomb-%d' % k); os.makedirs(d, exist_ok=True)
    hdr = b'{"type":"session","version":0,"id":"bomb-%d","createdAt":1,"cwd":"/home/alice/proj","delegationDepth":0}\n' % k
    open(os.path.join(d, 'session.jsonl.zstd'), 'wb').write(z(hdr) + out[0])
EOF
for g in 2 16; do
	run "N2 32 compressed bombs, GOMAXPROCS=$g: candidates" XDG_CACHE_HOME=$W/c3-$g GOMAXPROCS=$g $T "$BIN" candidates --sessions "$S"
	run "N2 32 compressed bombs, GOMAXPROCS=$g: --no-cache" GOMAXPROCS=$g $T "$BIN" candidates --no-cache --sessions "$S"
done

# N3: 1 MiB of zstd decoding to 32 GiB (256 frames of RLE blocks).
S=$W/cpu
python3 - "$S" 256 <<'EOF'
import os, struct, subprocess, sys
root, nframes = sys.argv[1], int(sys.argv[2])
d = os.path.join(root, '--home-alice-proj--', 'cpu-1'); os.makedirs(d, exist_ok=True)
z = lambda b: subprocess.run(['zstd', '-q', '-c'], input=b, stdout=subprocess.PIPE, check=True).stdout
blk = lambda typ, size, last, payload=b'': struct.pack('<I', (size << 3) | (typ << 1) | last)[:3] + payload
with open(os.path.join(d, 'session.jsonl.zstd'), 'wb') as f:
    f.write(z(b'{"type":"session","version":0,"id":"cpu-1","createdAt":1786000000000,"cwd":"/home/alice/proj","delegationDepth":0}\n'))
    for seq in range(nframes):
        pre = b'{"type":"todo/write","seq":%d,"time":1,"data":{"x":"' % seq
        f.write(struct.pack('<I', 0xFD2FB528) + b'\x00\x68' + blk(0, len(pre), 0, pre)
                + blk(1, 128 << 10, 0, b'a') * 1016 + blk(0, 4, 1, b'"}}\n'))
EOF
run "N3 1 MiB of zstd, 32 GiB decoded: candidates" XDG_CACHE_HOME=$W/c4 $T "$BIN" candidates --sessions "$S"
run "N3 1 MiB of zstd, 32 GiB decoded: prepare" XDG_CACHE_HOME=$W/c4 $T "$BIN" prepare --sessions "$S" '@[x](dsh-session:ImNwdS0xIg)'

# N8: 1,000,000 tiny user messages (175 MB raw).
S=$W/many
python3 - "$S" <<'EOF'
import os, sys, json
root = sys.argv[1]; d = root + '/--home-alice-proj--/many'; os.makedirs(d, exist_ok=True)
with open(d + '/session.jsonl', 'w') as f:
    f.write(json.dumps({'type': 'session', 'version': 0, 'id': 'many', 'createdAt': 1, 'cwd': '/home/alice/proj', 'delegationDepth': 0}) + '\n')
    for i in range(1000000):
        f.write('{"type":"user/message","seq":%d,"time":1,"data":{"content":[{"type":"text","text":"m%d"}],"source":{"kind":"user"},"role":"user","id":"m%d"},"surfaceOp":"append"}\n' % (i, i, i))
EOF
run "N8 1M tiny messages: prepare" XDG_CACHE_HOME=$W/c5 $T "$BIN" prepare --sessions "$S" '@[x](dsh-session:Im1hbnki)'
run "N8 1M tiny messages: prepare --max-read-mb 32" XDG_CACHE_HOME=$W/c5 $T "$BIN" prepare --max-read-mb 32 --sessions "$S" '@[x](dsh-session:Im1hbnki)'
