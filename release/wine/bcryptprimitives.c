/*
 * bcryptprimitives.dll for Wine 8 (Debian 12's wine64), which lacks it.
 *
 * Go >= 1.24 programs for Windows load bcryptprimitives.dll at start-up and
 * take their random bytes from its ProcessPrng; without the DLL the runtime
 * aborts ("bcryptprimitives.dll not found") before main. Wine >= 9 ships
 * the DLL; on Wine 8 this stand-in, installed into the prefix's system32
 * by release/wine-test.sh, forwards to RtlGenRandom (advapi32's
 * SystemFunction036), which Wine implements with the host's random source.
 * It is a test fixture only: nothing built for users contains it.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
	while (len > 0) {
		ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
		if (!SystemFunction036(data, n))
			return FALSE;
		data += n;
		len -= n;
	}
	return TRUE;
}
