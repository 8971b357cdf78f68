package shell

// readers are programs that, with any arguments but those readWriters
// lists, only read: they print what they find and change nothing.
var readers = map[string]bool{
	"ls": true, "cat": true, "head": true, "tail": true, "wc": true, "pwd": true, "echo": true,
	"grep": true, "rg": true, "egrep": true, "fgrep": true, "tree": true, "file": true, "stat": true,
	"du": true, "df": true, "which": true, "whoami": true, "date": true, "uname": true,
	"diff": true, "cmp": true, "basename": true, "dirname": true, "realpath": true,
	"readlink": true, "nl": true, "uniq": true, "cut": true, "tr": true, "sort": true, "find": true,
	"git": true,
}

// readWriters are the arguments that make a reader write or run
// something: `sort -o file`, `find -delete`, `find -exec …`.
var readWriters = map[string]map[string]bool{
	"sort": {"-o": true, "--output": true},
	"find": {"-delete": true, "-exec": true, "-execdir": true, "-ok": true, "-okdir": true,
		"-fprint": true, "-fprint0": true, "-fprintf": true, "-fls": true},
	"tree": {"-o": true},
}

// gitReaders are the git subcommands that only read the repository.
var gitReaders = map[string]bool{
	"status": true, "log": true, "diff": true, "show": true, "blame": true, "rev-parse": true,
	"ls-files": true, "grep": true, "shortlog": true, "describe": true,
}

// ReadsOnly reports whether the command is one plain simple command (see
// Words) of a program that only reads, with no argument that would make it
// write: `ls -la`, `git status`, `grep -rn foo .`. Anything else (a
// pipeline, a redirection to a file, a program it does not know) is not
// taken to only read. It labels a command for a person; it allows nothing.
func (sc *Command) ReadsOnly() bool {
	w := sc.words
	if len(w) == 0 || sc.dynamic != "" || !readers[w[0]] {
		return false
	}
	if w[0] == "git" {
		return len(w) > 1 && gitReaders[w[1]]
	}
	for _, a := range w[1:] {
		if readWriters[w[0]][a] {
			return false
		}
	}
	return true
}
