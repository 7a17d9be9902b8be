// SPDX-License-Identifier: GPL-2.0
/* SHA-256 of a buffer, as hex. */
#include <openssl/evp.h>
#include <stdio.h>

#include "digest.h"

int sha256_hex(const void *data, size_t len, char hex[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0, i;

	if (!EVP_Digest(data, len, md, &n, EVP_sha256(), NULL) || n != 32)
		return -1;
	for (i = 0; i < n; i++)
		sprintf(hex + 2 * i, "%02x", md[i]);
	hex[64] = '\0';
	return 0;
}
