#!/usr/bin/env bash
# A compiler or linker launcher that logs each build step's start, end and output (issue 63:
# what a fresh build's time is made of). usage:
#   cmake -S . -B build -DCMAKE_{C,CXX,CUDA}_COMPILER_LAUNCHER=$PWD/lab/scripts/timed_step.sh \
#         -DCMAKE_{C,CXX,CUDA}_LINKER_LAUNCHER=$PWD/lab/scripts/timed_step.sh
#   TIMED_STEP_LOG=/tmp/steps.log cmake --build build -j
#   sort -k2 -n /tmp/steps.log   # start end seconds output
start=$(date +%s.%N)
"$@"
rc=$?
out=?
prev=
for a in "$@"; do
  [ "$prev" = -o ] && out=$a
  prev=$a
done
end=$(date +%s.%N)
echo "$start $end $(echo "$end - $start" | awk '{print $1 - $3}') $out" >>"${TIMED_STEP_LOG:-/tmp/steps.log}"
exit $rc
