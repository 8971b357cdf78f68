package lexers

import (
	"regexp"
)

// TODO(moorereason): can this be factored away?
var zoneAnalyserRe = regexp.MustCompile(`(?m)^@\s+IN\s+SOA\s+`)

// reasonix: run by load, which has the embedded lexer this needs.
func init() { // nolint: gochecknoinits
	afterLoad = append(afterLoad, setupDNSAnalyser)
}

func setupDNSAnalyser() { // reasonix: was init
	GlobalLexerRegistry.Get("dns").SetAnalyser(func(text string) float32 {
		if zoneAnalyserRe.FindString(text) != "" {
			return 1.0
		}
		return 0.0
	})
}
