// handoff-import-worker: reads one file with Assimp for the handoff library in a process of its
// own (src/rig/assimp_read.h). The library starts it with posix_spawn; the request comes on
// standard input, the reply goes to standard output. Not meant to be run by hand.
#include "rig/assimp_read.h"

#include <fcntl.h>
#include <unistd.h>

int main() {
  // The reply keeps the standard output it was given; anything Assimp prints goes to /dev/null.
  const int reply = ::dup(STDOUT_FILENO);
  if (reply < 0) return 4;
  if (const int null = ::open("/dev/null", O_WRONLY); null >= 0) ::dup2(null, STDOUT_FILENO);
  const int status = handoff::detail::runImportWorker(STDIN_FILENO, reply);
  // No destructors and no leak report after the reply: the process's work is done.
  ::_exit(status);
}
