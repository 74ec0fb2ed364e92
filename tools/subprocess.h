// Running a helper program (PyTorch's side of a comparison, a bench's child) and reading what it
// printed.
#ifndef PTO_TOOLS_SUBPROCESS_H_
#define PTO_TOOLS_SUBPROCESS_H_

#include <sys/types.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace pto::tools {

// Runs `command` through the shell with its stderr joined to its stdout, which it appends to
// `output`. Returns the exit status; -1 when it could not run or did not exit normally.
int RunCommand(const std::string& command, std::string& output);

// A program run through the shell that the caller talks to line by line: its stdin is a pipe
// the caller writes, its stdout and stderr one pipe the caller reads. Benches use it to take
// turns with several baselines, one step each, so noise on a shared machine hits all alike.
class Child {
 public:
  // Null when the pipes or the process could not be made.
  static std::unique_ptr<Child> Start(const std::string& command);
  ~Child();  // ends the child (Finish) if the caller did not
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  // Writes `line` and a newline, flushed: false once the child stopped reading.
  bool WriteLine(const std::string& line);
  // The next line it printed, without the newline; false at the end of its output.
  bool ReadLine(std::string& line);
  // Reads lines until one starts with `prefix`, which it returns in `line`; false at the end.
  bool ReadUntil(const std::string& prefix, std::string& line);
  // Closes its stdin, reads the rest of its output and waits for it: the exit status, -1 when
  // it did not exit normally.
  int Finish();
  // Everything it printed so far.
  const std::string& output() const { return output_; }
  // CPU time its threads and its descendants' have run, in seconds (the scheduler's nanosecond
  // counts); -1 once it finished. Waiting for it to stop growing tells when a child's threads that
  // spin after their work (OpenMP's and OpenBLAS's defaults) have gone to sleep.
  double CpuSeconds() const;

 private:
  Child(pid_t pid, std::FILE* in, std::FILE* out) : pid_(pid), in_(in), out_(out) {}
  pid_t pid_;
  std::FILE* in_;   // its stdin
  std::FILE* out_;  // its stdout and stderr
  std::string output_;
  int status_ = -1;
  bool finished_ = false;
};

// Waits until none of `children` (null entries skipped) and no other thread of this process
// runs any more: their CPU time summed grows by less than 0.25 ms in 5 ms, as when spinning
// OpenMP, OpenBLAS and oneTBB workers have gone to sleep; at most 1 s. Returns the milliseconds
// waited. Benches call it between turns, so one side's idle spinning does not take a core from the
// next side's timing.
double WaitForQuiet(const std::vector<Child*>& children);

// The directory of the running program (a bench finds its helper programs beside it); "."
// when /proc/self/exe cannot be read.
std::string ProgramDirectory();

}  // namespace pto::tools

#endif  // PTO_TOOLS_SUBPROCESS_H_
