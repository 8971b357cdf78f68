// Package goal holds the pure parts of long autonomous goals: the durable
// goal record and its journal (one JSON file per goal, replaced atomically
// as the goal changes), the parsing of /goal prompts, the goal block the
// controller prepends to the user turns it issues, the normalised
// blocked-state audit, the todo list's serial contract and the progress
// lease. It keeps no goroutines and writes nothing but the files it is
// asked to.
package goal
