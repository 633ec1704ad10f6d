#include "cli_app.h"
namespace ts::cli { int run(int, char**) { return 0; } }
