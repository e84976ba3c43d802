# eval.mk - programs with planted changes for `prof diff` / `prof crosscheck`
# (tests/eval/README.md).  Included by the top Makefile; EVAL_BINS is a
# prerequisite of `make check` (tests/t60*-*.sh) and of scripts/eval-crosscheck.sh.
EVAL_BINS := tests/eval/bin/planted

tests/eval/bin/planted: tests/eval/planted.c tests/eval/eval.mk
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -D_GNU_SOURCE $(WARNINGS) -O2 -g -o $@ $<

eval-bins: $(EVAL_BINS)
.PHONY: eval-bins
