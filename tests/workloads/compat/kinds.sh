# kinds.sh - the kinds of binaries of the compatibility matrix, built in
# the current directory and handed one by one to the caller's
#   kind NAME MIN_COMPLETE CMD... -- NAME=TRUTH... [--no-line]
# (record CMD; its hot functions and their known self split), or
#   test_skip NAME REASON
# when the kind's toolchain is missing.  Sourced by tests/t1200-compat-matrix.sh
# (which checks each kind) and scripts/compat.sh (which runs each kind
# under prof and perf side by side).  Needs TOP, SECS and MIN_COMPLETE.
COMPAT="$TOP/tests/workloads/compat"

have() { command -v "$1" >/dev/null 2>&1; }

# C, one kind per linker
for ld in bfd gold lld mold; do
	if gcc -O2 -g -fuse-ld=$ld -o c-$ld "$TOP/tests/workloads/split.c" 2>c-$ld.err; then
		kind c-$ld $MIN_COMPLETE ./c-$ld $SECS -- spin_a=60 spin_b=30 spin_c=10
	else
		test_skip "c-$ld" "gcc -fuse-ld=$ld cannot link here ($(head -c 120 c-$ld.err))"
	fi
done

# clang: DWARF 5 without .debug_aranges; the inlined function is a frame
if have clang; then
	clang -O2 -g -o c-clang "$TOP/tests/workloads/split.c" &&
		kind c-clang $MIN_COMPLETE ./c-clang $SECS -- spin_a=60 spin_b=30 spin_c=10
	clang -O2 -g -o c-clang-inline "$TOP/tests/workloads/inline.c" &&
		kind c-clang-inline $MIN_COMPLETE ./c-clang-inline $SECS -- inline_hot=90 outer_caller=10
else
	test_skip c-clang "clang is not installed"
fi

# C++: names only a demangler gets right
CXX_SPLIT=("compat::Engine<long>::alpha(unsigned long)=60" "compat::beta(unsigned long)=30"
	   "compat::Counter::operator()(unsigned long)=10")
g++ -O2 -g -o cxx-gcc "$COMPAT/split.cpp" &&
	kind cxx-gcc $MIN_COMPLETE ./cxx-gcc $SECS -- "${CXX_SPLIT[@]}"
if have clang++ && clang++ -O2 -g -fuse-ld=lld -o cxx-clang-lld "$COMPAT/split.cpp" 2>/dev/null; then
	kind cxx-clang-lld $MIN_COMPLETE ./cxx-clang-lld $SECS -- "${CXX_SPLIT[@]}"
else
	test_skip cxx-clang-lld "clang++ with -fuse-ld=lld is not available"
fi

# Rust: rustc's default linker (rust-lld since 1.90), the system linker, v0 mangling
RUSTC=$(command -v rustc || echo "$HOME/.cargo/bin/rustc")
if [ -x "$RUSTC" ]; then
	rs() { "$RUSTC" -O -g --crate-name rsplit "$COMPAT/split.rs" -o "$@" 2>/dev/null; }
	# the closure is main's {closure#N} in both manglings (legacy's
	# "{{closure}}" gets its index from DWARF)
	RS_SPLIT=("<rsplit::Weighted<u64> as rsplit::Scorer>::score=60" "rsplit::work::beta=30"
		  're:^rsplit::main::\{closure#[0-9]+\}$=10')
	rs rust-default && kind rust-default $MIN_COMPLETE ./rust-default $SECS -- "${RS_SPLIT[@]}"
	# rustc before 1.90 links with cc anyway and does not know the flag
	{ rs rust-cc -C linker-features=-lld || rs rust-cc; } &&
		kind rust-cc $MIN_COMPLETE ./rust-cc $SECS -- "${RS_SPLIT[@]}"
	rs rust-v0 -C symbol-mangling-version=v0 &&
		kind rust-v0 $MIN_COMPLETE ./rust-v0 $SECS -- "${RS_SPLIT[@]}"
else
	test_skip rust "rustc is not installed"
fi

# Go: DWARF without .debug_aranges; goroutines end in runtime.goexit.
# go-stripped is built as releases often are (-ldflags='-s -w': no DWARF,
# no .symtab): names, lines and the inlined main.gamma come from .gopclntab.
# go-g0 (g0.go, no known split) spends about half its time on the g0 stacks
# of Go's threads, behind runtime.systemstack, mcall and morestack; its
# -s -w build is walked by Go's frame sizes alone.
if ! have go; then
	test_skip go "go is not installed"
elif mkdir -p gohome gog0 && cp "$COMPAT/split.go" gohome/ && cp "$COMPAT/g0.go" gog0/ &&
	(cd gohome && printf 'module gosplit\n\ngo 1.19\n' >go.mod &&
	GOFLAGS=-mod=mod GOCACHE="$PWD/gocache" go build -o ../go-split . &&
	GOFLAGS=-mod=mod GOCACHE="$PWD/gocache" go build -ldflags='-s -w' -o ../go-stripped . &&
	cd ../gog0 && printf 'module gog0\n\ngo 1.19\n' >go.mod &&
	GOFLAGS=-mod=mod GOCACHE="$PWD/../gohome/gocache" go build -o ../go-g0 . &&
	GOFLAGS=-mod=mod GOCACHE="$PWD/../gohome/gocache" go build -ldflags='-s -w' -o ../go-g0-stripped .) >go.err 2>&1; then
	kind go $MIN_COMPLETE ./go-split $SECS -- main.alpha=60 main.beta=30 main.gamma=10
	kind go-stripped $MIN_COMPLETE ./go-stripped $SECS -- main.alpha=60 main.beta=30 main.gamma=10
	kind go-g0 $MIN_COMPLETE ./go-g0 $SECS --
	kind go-g0-stripped $MIN_COMPLETE ./go-g0-stripped $SECS --
else
	test_skip go "go build failed: $(head -c 160 go.err)"
fi

# Node: JIT names from /tmp/perf-PID.map (prof: "alpha" in split.js at its
# line; perf: "JS:*alpha /path/split.js:L:C")
if have node && node --perf-basic-prof -e 0 2>/dev/null; then
	kind node 90 node --perf-basic-prof "$COMPAT/split.js" $((${SECS%.*} + 1)) -- \
		're:^(JS:[*~]?)?alpha( |$)=67' 're:^(JS:[*~]?)?beta( |$)=33' --no-line
else
	test_skip node "node with --perf-basic-prof is not available"
fi

# stripped: no names but the .eh_frame_hdr function starts; _start from e_entry
if gcc -O2 -o c-stripped-full "$TOP/tests/workloads/split.c" && cp c-stripped-full c-stripped && strip c-stripped; then
	off() { printf 'c-stripped+0x%x' "0x$(nm c-stripped-full | awk -v f="$1" '$3 == f { print $1 }')"; }
	kind stripped $MIN_COMPLETE ./c-stripped $SECS -- "$(off spin_a)=60" "$(off spin_b)=30" "$(off spin_c)=10" --no-line
fi

# another mount namespace: the binary only exists on a tmpfs mounted there
if have unshare && unshare -m true 2>/dev/null; then
	cp c-bfd "$PWD/c-mntns" 2>/dev/null || gcc -O2 -g -o "$PWD/c-mntns" "$TOP/tests/workloads/split.c"
	mkdir -p "$PWD/ns"
	# five programs exec here (unshare, sh, mount, cp, the workload): samples
	# taken inside execve have no user stack yet.  The workload runs 2 s at
	# least: its files are reachable only while it lives, and on a loaded
	# machine the recorder reads its mmap records a second late.
	kind mntns 94 unshare -m sh -c "'mount -t tmpfs none $PWD/ns && cp $PWD/c-mntns $PWD/ns/ && exec $PWD/ns/c-mntns $((${SECS%.*} < 2 ? 2 : ${SECS%.*}))'" \
		-- spin_a=60 spin_b=30 spin_c=10
else
	test_skip mntns "unshare -m is not permitted here"
fi

