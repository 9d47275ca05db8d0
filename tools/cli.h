/* Shared pieces of the memhier command line. The CLI may print and exit; the library
 * never does. Exit codes: 0 success, 1 the work failed, 2 the command line is wrong. */
#ifndef MEMHIER_CLI_H
#define MEMHIER_CLI_H

#include "core/internal.h"
#include "memhier.h"

#include <stddef.h>

enum { CLI_OK = 0, CLI_FAILED = 1, CLI_USAGE = 2 };

int cli_error(int code, const char *fmt, ...) MH_PRINTF(2, 3);

/* --device's value: "cpu" or a device index (prints and returns CLI_USAGE on failure); NULL (no
 * --device): GPU 0 when a CUDA device exists, else the CPU backend. */
int cli_device(const char *s, int *device);
/* A positive decimal count; prints and returns CLI_USAGE on failure. */
int cli_parse_count(const char *flag, const char *s, size_t *v);
int cli_parse_pad(const char *s, mh_pad *pad);
/* A boundary mode's name (mh_mode_parse's); CLI_USAGE with the choices otherwise. */
int cli_parse_mode(const char *s, mh_mode *mode);
/* An accuracy contract's name (mh_precision_parse's); CLI_USAGE with the choices otherwise. */
int cli_parse_precision(const char *s, mh_precision *precision);
/* A context for one command's calls on `device`, keeping `precision` (NULL: the library's
 * default); prints why not. Its kernels load at their first launch: the command has nothing else
 * queued on the device, so loading all of them would only cost time. */
int cli_context(int device, const mh_precision *precision, mh_context **ctx);
/* Returns the value after argv[*i] (advancing *i), or NULL after printing an error. */
const char *cli_value(int argc, char **argv, int *i);
/* Parses an op name; prints and returns CLI_USAGE when unknown. */
int cli_parse_op(const char *s, mh_op *op);

/* Options of the form "--name value": values[i] gets the value of names[i] (NULL if absent;
 * names is NULL-terminated). Unknown options and missing values print and give CLI_USAGE. */
int cli_flags(int argc, char **argv, const char *cmd, const char *const *names, const char **values);

/* A host array and its copy in the context's memory (the same pointer on the CPU). */
typedef struct cli_buffer {
    void *host, *mem;
    size_t bytes;
} cli_buffer;
int cli_place(mh_context *ctx, cli_buffer *b, int upload); /* allocate (and upload) */
int cli_fetch(mh_context *ctx, cli_buffer *b);             /* download into host */
void cli_release(mh_context *ctx, cli_buffer *b);

/* The whole command line: argv[0] is the program, argv[1] the command. */
int cli_main(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_filter(int argc, char **argv);
int cmd_explain(int argc, char **argv);

#endif
