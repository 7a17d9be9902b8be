// SPDX-License-Identifier: GPL-2.0
/* CRC32C against RFC 3720 appendix B.4 and the standard check value. */
#include "crc32c.h"
#include "test.h"

TEST(crc32c_matches_standard_check_value)
{
	CHECK_EQ(crc32c("123456789", 9), 0xe3069283u);
}

TEST(crc32c_of_32_zero_bytes_goes_on_the_wire_as_rfc3720_shows)
{
	uint8_t zeros[32] = { 0 }, wire[4];

	crc32c_put(wire, crc32c(zeros, sizeof(zeros)));
	CHECK_EQ(wire[0], 0xaa);
	CHECK_EQ(wire[1], 0x36);
	CHECK_EQ(wire[2], 0x91);
	CHECK_EQ(wire[3], 0x8a);
	CHECK_EQ(crc32c_get(wire), crc32c(zeros, sizeof(zeros)));
}

TEST(crc32c_continue_equals_crc_of_concatenation)
{
	const char *s = "header-and-ahs";

	CHECK_EQ(crc32c_continue(crc32c(s, 6), s + 6, strlen(s) - 6),
		 crc32c(s, strlen(s)));
}
