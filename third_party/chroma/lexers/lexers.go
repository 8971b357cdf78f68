package lexers

import (
	"embed"
	"io/fs"
	"sync" // reasonix: for load

	"github.com/alecthomas/chroma/v2"
)

//go:embed embedded
var embedded embed.FS

// GlobalLexerRegistry is the global LexerRegistry of Lexers.
//
// reasonix: it starts with only the lexers this package's variables
// register; the embedded XML lexers are read on the first lookup (load),
// not at init, which parsed 240 files in every program linking the package.
var GlobalLexerRegistry = chroma.NewLexerRegistry()

var (
	loadOnce  sync.Once // reasonix: guards load
	afterLoad []func()  // reasonix: init work that needs the embedded lexers
)

// load adds the embedded lexers to GlobalLexerRegistry, once, and returns
// it. reasonix: the lexers registered at init are registered again after
// the embedded ones, as upstream's order did, so they win a name clash.
func load() *chroma.LexerRegistry {
	loadOnce.Do(func() {
		reg := chroma.NewLexerRegistry()
		paths, err := fs.Glob(embedded, "embedded/*.xml")
		if err != nil {
			panic(err)
		}
		for _, path := range paths {
			reg.Register(chroma.MustNewXMLLexer(embedded, path))
		}
		for _, lexer := range GlobalLexerRegistry.Lexers {
			reg.Register(lexer)
		}
		*GlobalLexerRegistry = *reg
		for _, fn := range afterLoad {
			fn()
		}
	})
	return GlobalLexerRegistry
}

// Names of all lexers, optionally including aliases.
func Names(withAliases bool) []string {
	return load().Names(withAliases) // reasonix: embedded lexers first
}

// Get a Lexer by name, alias or file extension.
//
// Note that this if there isn't an exact match on name or alias, this will
// call Match(), so it is not efficient.
func Get(name string) chroma.Lexer {
	return load().Get(name) // reasonix: embedded lexers first
}

// MatchMimeType attempts to find a lexer for the given MIME type.
func MatchMimeType(mimeType string) chroma.Lexer {
	return load().MatchMimeType(mimeType) // reasonix: embedded lexers first
}

// Match returns the first lexer matching filename.
//
// Note that this iterates over all file patterns in all lexers, so it's not
// particularly efficient.
func Match(filename string) chroma.Lexer {
	return load().Match(filename) // reasonix: embedded lexers first
}

// Register a Lexer with the global registry.
func Register(lexer chroma.Lexer) chroma.Lexer {
	return GlobalLexerRegistry.Register(lexer)
}

// Analyse text content and return the "best" lexer..
func Analyse(text string) chroma.Lexer {
	return load().Analyse(text) // reasonix: embedded lexers first
}

// PlaintextRules is used for the fallback lexer as well as the explicit
// plaintext lexer.
func PlaintextRules() chroma.Rules {
	return chroma.Rules{
		"root": []chroma.Rule{
			{`.+`, chroma.Text, nil},
			{`\n`, chroma.Text, nil},
		},
	}
}

// Fallback lexer if no other is found.
var Fallback chroma.Lexer = chroma.MustNewLexer(&chroma.Config{
	Name:      "fallback",
	Filenames: []string{"*"},
	Priority:  -1,
}, PlaintextRules)
