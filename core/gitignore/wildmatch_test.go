package gitignore

import "testing"

// TestWildmatch checks the glob engine against the expectations of git's
// own wildmatch test-suite (t3070, the case-sensitive glob column).
func TestWildmatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text, pat string
		want            bool
	}{
		{"literal", "foo", "foo", true},
		{"literal mismatch", "foo", "bar", false},
		{"empty both", "", "", true},
		{"question marks", "foo", "???", true},
		{"too few question marks", "foo", "??", false},
		{"star", "foo", "*", true},
		{"prefix star", "foo", "f*", true},
		{"star prefix mismatch", "foo", "*f", false},
		{"star both sides", "foo", "*foo*", true},
		{"many stars", "foobar", "*ob*a*r*", true},
		{"star backtracks", "aaaaaaabababab", "*ab", true},
		{"escaped star", "foo*", `foo\*`, true},
		{"escaped star is literal", "foobar", `foo\*bar`, false},
		{"escaped backslash", `f\oo`, `f\\oo`, true},
		{"class then question", "ball", "*[al]?", true},
		{"class one char", "ten", "[ten]", false},
		{"negated class after stars", "ten", "**[!te]", true},
		{"negated class rejects", "ten", "**[!ten]", false},
		{"range", "ten", "t[a-g]n", true},
		{"negated range rejects", "ten", "t[!a-g]n", false},
		{"negated range", "ton", "t[!a-g]n", true},
		{"caret negation", "ton", "t[^a-g]n", true},
		{"bracket first in class", "a]b", "a[]]b", true},
		{"bracket and dash", "a-b", "a[]-]b", true},
		{"bracket and dash 2", "a]b", "a[]-]b", true},
		{"bracket and dash rejects", "aab", "a[]-]b", false},
		{"bracket, a and dash", "aab", "a[]a-]b", true},
		{"lone bracket", "]", "]", true},

		{"star stops at slash", "foo/baz/bar", "foo*bar", false},
		{"inner double star is a star", "foo/baz/bar", "foo**bar", false},
		{"inner double star without slash", "foobazbar", "foo**bar", true},
		{"middle double star", "foo/baz/bar", "foo/**/bar", true},
		{"two middle double stars", "foo/baz/bar", "foo/**/**/bar", true},
		{"middle double star deep", "foo/b/a/z/bar", "foo/**/bar", true},
		{"two middle double stars deep", "foo/b/a/z/bar", "foo/**/**/bar", true},
		{"middle double star zero dirs", "foo/bar", "foo/**/bar", true},
		{"two middle double stars zero dirs", "foo/bar", "foo/**/**/bar", true},
		{"question never matches slash", "foo/bar", "foo?bar", false},
		{"class never matches slash", "foo/bar", "foo[/]bar", false},
		{"negated class never matches slash", "foo/bar", "foo[^a-z]bar", false},
		{"negated classes over slash", "foo/bar", "f[^eiu][^eiu][^eiu][^eiu][^eiu]r", false},
		{"negated classes", "foo-bar", "f[^eiu][^eiu][^eiu][^eiu][^eiu]r", true},
		{"leading double star zero dirs", "foo", "**/foo", true},
		{"leading double star one dir", "XXX/foo", "**/foo", true},
		{"leading double star two dirs", "bar/baz/foo", "**/foo", true},
		{"star slash is one dir", "bar/baz/foo", "*/foo", false},
		{"double star then star", "foo/bar/baz", "**/bar*", false},
		{"double star then dir star", "deep/foo/bar/baz", "**/bar/*", true},
		{"trailing slash not matched by star", "deep/foo/bar/baz/", "**/bar/*", false},
		{"trailing double star takes slash", "deep/foo/bar/baz/", "**/bar/**", true},
		{"dir star needs an element", "deep/foo/bar", "**/bar/*", false},
		{"trailing double star empty rest", "deep/foo/bar/", "**/bar/**", true},
		{"bar double star inner", "foo/bar/baz", "**/bar**", false},
		{"star dir then trailing double star", "foo/bar/baz/x", "*/bar/**", true},
		{"star dir is one element", "deep/foo/bar/baz/x", "*/bar/**", false},
		{"double star and stars", "deep/foo/bar/baz/x", "**/bar/*/*", true},

		{"degenerate range", "acrt", "a[c-c]st", false},
		{"degenerate range matches", "acrt", "a[c-c]rt", true},
		{"negated bracket-dash", "]", "[!]-]", false},
		{"negated bracket-dash matches", "a", "[!]-]", true},
		{"lone backslash on empty", "", `\`, false},
		{"lone backslash", `\`, `\`, false},
		{"trailing lone backslash", `XXX/\`, `*/\`, false},
		{"trailing escaped backslash", `XXX/\`, `*/\\`, true},
		{"at sign", "@foo", "@foo", true},
		{"at sign mismatch", "foo", "@foo", false},
		{"escaped bracket", "[ab]", `\[ab]`, true},
		{"bracket in class", "[ab]", "[[]ab]", true},
		{"bracket colon in class", "[ab]", "[[:]ab]", true},
		{"empty class name", "[ab]", "[[::]ab]", false},
		{"unterminated class name", "[ab]", "[[:digit]ab]", true},
		{"escaped bracket in class", "[ab]", `[\[:]ab]`, true},
		{"escaped question marks", "?a?b", `\??\?b`, true},
		{"escaped letters", "abc", `\a\b\c`, true},
		{"empty pattern", "foo", "", false},
		{"class at the end", "foo/bar/baz/to", "**/t[o]", true},

		{"posix classes", "a1B", "[[:alpha:]][[:digit:]][[:upper:]]", true},
		{"posix lower not upper", "a", "[[:digit:][:upper:][:space:]]", false},
		{"posix upper", "A", "[[:digit:][:upper:][:space:]]", true},
		{"posix digit", "1", "[[:digit:][:upper:][:space:]]", true},
		{"unknown posix class", "1", "[[:digit:][:upper:][:spaci:]]", false},
		{"posix space", " ", "[[:digit:][:upper:][:space:]]", true},
		{"posix none", ".", "[[:digit:][:upper:][:space:]]", false},
		{"posix punct", ".", "[[:digit:][:punct:][:space:]]", true},
		{"xdigit digit", "5", "[[:xdigit:]]", true},
		{"xdigit lower", "f", "[[:xdigit:]]", true},
		{"xdigit upper", "D", "[[:xdigit:]]", true},
		{"every class", "_", "[[:alnum:][:alpha:][:blank:][:cntrl:][:digit:][:graph:][:lower:][:print:][:punct:][:space:][:upper:][:xdigit:]]", true},
		{"negated classes", ".", "[^[:alnum:][:alpha:][:blank:][:cntrl:][:digit:][:lower:][:space:][:upper:][:xdigit:]]", true},
		{"ranges around class digit", "5", "[a-c[:digit:]x-z]", true},
		{"ranges around class low", "b", "[a-c[:digit:]x-z]", true},
		{"ranges around class high", "y", "[a-c[:digit:]x-z]", true},
		{"ranges around class none", "q", "[a-c[:digit:]x-z]", false},

		{"escaped range start", "]", `[\\-^]`, true},
		{"escaped range start outside", "[", `[\\-^]`, false},
		{"escaped dash", "-", `[\-_]`, true},
		{"escaped close bracket", "]", `[\]]`, true},
		{"escaped close bracket two chars", `\]`, `[\]]`, false},
		{"escaped close bracket backslash", `\`, `[\]]`, false},
		{"empty-looking class", "ab", "a[]b", false},
		{"unclosed class text", "a[]b", "a[]b", false},
		{"unclosed class", "ab[", "ab[", false},
		{"unclosed negation", "ab", "[!", false},
		{"unclosed dash", "ab", "[-", false},
		{"dash alone", "-", "[-]", true},
		{"unclosed range", "-", "[a-", false},
		{"unclosed negated range", "-", "[!a-", false},
		{"range from dash", "-", "[--A]", true},
		{"range from dash digit", "5", "[--A]", true},
		{"range to dash space", " ", "[ --]", true},
		{"range to dash dollar", "$", "[ --]", true},
		{"range to dash dash", "-", "[ --]", true},
		{"range to dash outside", "0", "[ --]", false},
		{"dash range", "-", "[---]", true},
		{"two dash ranges", "-", "[------]", true},
		{"range then dash", "j", "[a-e-n]", false},
		{"range then dash literal", "-", "[a-e-n]", true},
		{"negated dashes", "a", "[!------]", true},
		{"range from bracket", "[", "[]-a]", false},
		{"range from bracket inside", "^", "[]-a]", true},
		{"negated range from bracket", "^", "[!]-a]", false},
		{"negated range from bracket outside", "[", "[!]-a]", true},
		{"caret not first", "^", "[a^bc]", true},
		{"dash last then bracket", "-b]", "[a-]b]", true},
		{"escaped bracket then nothing", `\`, `[\]`, false},
		{"escaped backslash class", `\`, `[\\]`, true},
		{"negated escaped backslash", `\`, `[!\\]`, false},
		{"range to escaped backslash", "G", `[A-\\]`, true},
		{"no match b star a", "aaabbb", "b*a", false},
		{"no match star ba star", "aabcaa", "*ba*", false},
		{"comma", ",", "[,]", true},
		{"escaped backslash and comma", ",", `[\\,]`, true},
		{"escaped backslash and comma 2", `\`, `[\\,]`, true},
		{"range comma to dot", "-", "[,-.]", true},
		{"range comma to dot outside", "+", "[,-.]", false},
		{"range comma to dot long text", "-.]", "[,-.]", false},
		{"escaped range ends 2", "2", `[\1-\3]`, true},
		{"escaped range ends 3", "3", `[\1-\3]`, true},
		{"escaped range ends 4", "4", `[\1-\3]`, false},
		{"range to escaped bracket backslash", `\`, `[[-\]]`, true},
		{"range to escaped bracket open", "[", `[[-\]]`, true},
		{"range to escaped bracket close", "]", `[[-\]]`, true},
		{"range to escaped bracket dash", "-", `[[-\]]`, false},

		{"recursion", "-adobe-courier-bold-o-normal--12-120-75-75-m-70-iso8859-1", "-*-*-*-*-*-*-12-*-*-*-m-*-*-*", true},
		{"recursion mismatch", "-adobe-courier-bold-o-normal--12-120-75-75-X-70-iso8859-1", "-*-*-*-*-*-*-12-*-*-*-m-*-*-*", false},
		{"recursion slash", "-adobe-courier-bold-o-normal--12-120-75-75-/-70-iso8859-1", "-*-*-*-*-*-*-12-*-*-*-m-*-*-*", false},
		{"recursion dirs", "XXX/adobe/courier/bold/o/normal//12/120/75/75/m/70/iso8859/1", "XXX/*/*/*/*/*/*/12/*/*/*/m/*/*/*", true},
		{"recursion dirs mismatch", "XXX/adobe/courier/bold/o/normal//12/120/75/75/X/70/iso8859/1", "XXX/*/*/*/*/*/*/12/*/*/*/m/*/*/*", false},
		{"double star and many stars", "abcd/abcdefg/abcdefghijk/abcdefghijklmnop.txt", "**/*a*b*g*n*t", true},
		{"double star and many stars mismatch", "abcd/abcdefg/abcdefghijk/abcdefghijklmnop.txtz", "**/*a*b*g*n*t", false},
		{"three elements of one", "foo", "*/*/*", false},
		{"three elements of two", "foo/bar", "*/*/*", false},
		{"three elements", "foo/bba/arr", "*/*/*", true},
		{"three elements of four", "foo/bb/aa/rr", "*/*/*", false},
		{"three double stars", "foo/bb/aa/rr", "**/**/**", true},
		{"star X star", "abcXdefXghi", "*X*i", true},
		{"star X star over slashes", "ab/cXd/efXg/hi", "*X*i", false},
		{"stars per element", "ab/cXd/efXg/hi", "*/*X*/*/*i", true},
		{"double stars between", "ab/cXd/efXg/hi", "**/*X*/**/*i", true},

		{"short literal", "foo", "fo", false},
		{"path literal", "foo/bar", "foo/bar", true},
		{"dir star", "foo/bar", "foo/*", true},
		{"dir star one level", "foo/bba/arr", "foo/*", false},
		{"trailing double star", "foo/bba/arr", "foo/**", true},
		{"prefix star one level", "foo/bba/arr", "foo*", false},
		{"prefix double star not an element", "foo/bba/arr", "foo**", false},
		{"dir star suffix", "foo/bba/arr", "foo/*arr", false},
		{"dir double star suffix", "foo/bba/arr", "foo/**arr", false},
		{"dir star z", "foo/bba/arr", "foo/*z", false},
		{"dir double star z", "foo/bba/arr", "foo/**z", false},
		{"star Xg star", "ab/cXd/efXg/hi", "*Xg*i", false},

		{"case range upper", "a", "[A-Z]", false},
		{"case range upper match", "A", "[A-Z]", true},
		{"case range lower", "A", "[a-z]", false},
		{"case range lower match", "a", "[a-z]", true},
		{"case class upper", "a", "[[:upper:]]", false},
		{"case class upper match", "A", "[[:upper:]]", true},
		{"case class lower", "A", "[[:lower:]]", false},
		{"case class lower match", "a", "[[:lower:]]", true},
		{"case mixed range", "A", "[B-Za]", false},
		{"case mixed range match", "a", "[B-Za]", true},
		{"case range B to a", "A", "[B-a]", false},
		{"case range B to a match", "a", "[B-a]", true},
		{"case range Z to y", "z", "[Z-y]", false},
		{"case range Z to y match", "Z", "[Z-y]", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := wildmatch(tc.pat, tc.text); got != tc.want {
				t.Errorf("wildmatch(%q, %q) = %v, want %v", tc.pat, tc.text, got, tc.want)
			}
		})
	}
}

// FuzzWildmatch feeds arbitrary ignore-file lines and paths through the
// parser and matcher: they must neither panic nor hang.
func FuzzWildmatch(f *testing.F) {
	f.Add("**/foo/*.go", "a/foo/b.go")
	f.Add("[[:alpha:]-z]\\", "x")
	f.Add("!/a/**/b/ \\ ", "a/x/b/ ")
	f.Add("*a*a*a*a*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")
	f.Fuzz(func(t *testing.T, line, path string) {
		p, ok := parseLine(line)
		if !ok {
			return
		}
		name := path
		for i := len(path) - 1; i >= 0; i-- {
			if path[i] == '/' {
				name = path[i+1:]
				break
			}
		}
		p.matches("", path, name, false)
		p.matches("", path, name, true)
		wildmatch(line, path)
	})
}
