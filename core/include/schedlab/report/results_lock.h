// schedlab/report: one writer per results file, and the previous file kept
// under a name nothing overwrites.
//
// Owns: the advisory lock of a results file (flock on <file>.lock, held for
// the life of the object and released by the kernel if the process dies) and
// the rotation of <file> to <file>.prev (an existing .prev moves to the first
// free <file>.prev.N first).
// May depend on: schedlab/base.
// Invariants: the lock file is never deleted (deleting it would let a third
// writer lock a fresh inode while the second still holds the old one); a
// second writer fails at once with a user error naming the holder's pid.
#pragma once

#include <string>

namespace schedlab::report {

class ResultsLock {
 public:
  /// Creates the directory of `results_path` if needed, then locks the file
  /// for writing, or raises a user error: "results file
  /// X is being written by another schedlab process (pid N)".
  explicit ResultsLock(const std::string& results_path);
  ~ResultsLock();
  ResultsLock(const ResultsLock&) = delete;
  ResultsLock& operator=(const ResultsLock&) = delete;

  const std::string& lock_path() const { return lock_path_; }

 private:
  std::string lock_path_;
  int fd_ = -1;
};

/// Renames `path` to `path`.prev, first moving an existing `path`.prev to the
/// first free `path`.prev.N (N = 1, 2, ...): no earlier results are ever
/// overwritten. Returns the name an older .prev moved to ("" if none). A failed
/// rename is a user error with the OS's reason.
std::string keep_previous(const std::string& path);

}  // namespace schedlab::report
