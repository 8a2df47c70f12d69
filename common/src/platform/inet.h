#pragma once
// inet_pton / inet_ntop and the socket address types: <arpa/inet.h> on POSIX, <ws2tcpip.h> on Windows.
#if defined(_WIN32)
#include <winsock2.h>
#include <ws2tcpip.h>
#else
#include <arpa/inet.h>
#include <netinet/in.h>
#endif
