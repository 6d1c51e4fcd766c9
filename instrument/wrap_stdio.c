/* vigil — placeholder, filled in next. */
#include "preload.h"
