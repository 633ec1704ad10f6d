#include "cli_app.h"
int main(int argc, char** argv) { return ts::cli::run(argc, argv); }
