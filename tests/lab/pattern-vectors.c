// SPDX-License-Identifier: GPL-2.0
/*
 * pattern-vectors: print p2pprobe_pattern_word() test vectors from the real
 * header (kmod/uapi/p2pprobe.h), in the format of `tests/lab/pattern.py
 * vectors`. tests/lab/lab.py compares the two before any boot, so the
 * host-side checker is known to reproduce the pattern exactly.
 */
#include <stdio.h>

#include "uapi/p2pprobe.h"

int main(void)
{
	static const unsigned long long seeds[] = {
		0, 1, 0x11, 0xffffffffffffffffULL, 0x123456789abcdef0ULL,
	};
	static const unsigned long long words[] = {
		0, 1, 63, 64, 4095, 1ULL << 20, (1ULL << 61) - 1,
	};
	unsigned int i, j;

	for (i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++)
		for (j = 0; j < sizeof(words) / sizeof(words[0]); j++)
			printf("%llx %llx %016llx\n", seeds[i], words[j],
			       (unsigned long long)p2pprobe_pattern_word(seeds[i], words[j]));
	return 0;
}
