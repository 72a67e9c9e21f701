#!/bin/bash
# with-file-size-limit.sh ARGS...: runs $RIVETKIT_TEST_WRAPPED_BINARY ARGS... with a soft RLIMIT_FSIZE of
# $RIVETKIT_TEST_FSIZE_KB KiB, the way a full disk looks to it (writes past the limit fail with
# EFBIG; SIGXFSZ is ignored so they fail instead of killing the process). The hard limit stays,
# so a test can give the space back with `prlimit --pid PID --fsize=unlimited:`.
trap "" XFSZ
ulimit -S -f "${RIVETKIT_TEST_FSIZE_KB:?}"
exec "${RIVETKIT_TEST_WRAPPED_BINARY:?}" "$@"
