#!/usr/bin/env bash
# Every subcommand answers --help and -h with its own usage on stdout and exit status 0.
set -uo pipefail
cli=$1 failed=0
check() { # expected-phrase args...
  local want=$1; shift
  for flag in --help -h; do
    out=$("$cli" "$@" "$flag" 2>&1); rc=$?
    if [ $rc -ne 0 ] || ! grep -qF -- "$want" <<<"$out"; then
      echo "FAILED: memhier $* $flag: exit $rc, output lacks '$want':"; echo "$out"; failed=1
    fi
  done
}
check "memhier info" info
check "memhier list" list
check "memhier bench [OP]" bench
check "memhier bench [OP]" bench conv1d --n
check "memhier filter IN OUT" filter
check "memhier run conv1d" run
for op in conv1d conv2d transpose matmul reduce histogram rank; do check "memhier run $op" run $op; done
check "memhier COMMAND" help
out=$("$cli" run conv2d --help); grep -q "run conv1d" <<<"$out" && { echo "FAILED: run conv2d --help shows conv1d"; failed=1; }
[ $failed -eq 0 ] && echo "cli_help: every subcommand answers --help and -h"
exit $failed
