package util

import "sync" // reasonix: for OnceValue

//go:generate go run ../_tools unicode-case-folding-map -o ../_tools/unicode-case-folding-map.json
//go:generate go run ../_tools emb-structs -i ../_tools/unicode-case-folding-map.json -o ./unicode_case_folding.gen.go

// reasonix: the map is built on the first lookup, not in package init,
// which every program linking goldmark paid for (1,400 entries).
var unicodeCaseFoldings = sync.OnceValue(func() map[rune][]rune {
	foldings := make(map[rune][]rune, _unicodeCaseFoldingLength) // reasonix: local, returned
	cTo := 0
	for i := range _unicodeCaseFoldingLength {
		tTo := cTo + int(_unicodeCaseFoldingToIndex[i])
		to := _unicodeCaseFoldingTo[cTo:tTo]
		foldings[_unicodeCaseFoldingFrom[i]] = to // reasonix: local, returned
		cTo = tTo
	}
	return foldings // reasonix: the value OnceValue keeps
})
