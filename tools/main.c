/* The memhier command line's entry point (the fuzzer calls cli_main in-process instead). */
#include "cli.h"

int main(int argc, char **argv) { return cli_main(argc, argv); }
