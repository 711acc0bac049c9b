// zlib, for the raw DEFLATE around Core Data's Z_MODELCACHE.
#include <zlib.h>
