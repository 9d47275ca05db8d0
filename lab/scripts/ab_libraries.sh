#!/usr/bin/env bash
# Two libraries from one tree, measured in turns on one GPU machine: A the tree as it is, B the
# tree with a patch applied, each built with the compiled entry beside it (a library without it
# runs memhier's Python path, ~20 us more a call, and silently), then a command run with each in
# turn, ROUNDS times (A1 B1 A2 B2 ...), its label in $AB and the library in MEMHIER_LIBRARY.
#
# usage (from the repository root, on a GPU machine):
#   ROUNDS=3 bash lab/scripts/ab_libraries.sh lab/tools/SOME.patch python3 lab/scripts/walk_border.py '$AB'
# The command's output goes to stdout; builds log to /tmp/ab-{a,b}/build.log.
set -u
patch=$1
shift
rounds=${ROUNDS:-3}
py=$(command -v python3)
started=$SECONDS
for v in a b; do
    rm -rf /tmp/ab-$v && mkdir -p /tmp/ab-$v
    tar --exclude=./build --exclude=./build-gpu --exclude=./.git --exclude=./.whl -cf - . | (cd /tmp/ab-$v && tar xf -)
done
root=$PWD
(cd /tmp/ab-b && git apply "$root/$patch") || {
    echo "ab: $patch does not apply" >&2
    exit 2
}
jobs=$(( $(nproc) / 2 ))
for v in a b; do
    (cmake -S /tmp/ab-$v -B /tmp/ab-$v/build -DPython3_EXECUTABLE="$py" > /tmp/ab-$v/build.log 2>&1 &&
        cmake --build /tmp/ab-$v/build --target memhier memhier_entry -j "$jobs" >> /tmp/ab-$v/build.log 2>&1
     echo "ab: build $v rc=$? at $((SECONDS - started)) s" >&2) &
done
wait
for v in a b; do
    ls /tmp/ab-$v/build/libmemhier.so /tmp/ab-$v/build/_entry*.so > /dev/null || { echo "ab: build $v incomplete" >&2; exit 3; }
done
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
for r in $(seq 1 "$rounds"); do
    for v in a b; do
        AB=$v$r MEMHIER_LIBRARY=/tmp/ab-$v/build/libmemhier.so bash -c "$*"
    done
done
echo "ab: done at $((SECONDS - started)) s" >&2
