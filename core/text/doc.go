// Package text cuts text for the model or a screen: on rune boundaries, so
// a cut never leaves half a UTF-8 sequence (which a JSON encoder would turn
// into U+FFFD and a terminal into garbage), with a visible mark where text
// was dropped.
package text
