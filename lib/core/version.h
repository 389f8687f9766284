/* core/version.h - the version wap reports (--version, /health, MCP serverInfo). */
#define WAP_VERSION "0.1.0"
