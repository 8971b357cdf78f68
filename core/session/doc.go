// Package session holds a conversation's transcript on disk.
//
// A transcript is a JSONL file: a header record, then one record per message
// in the order the session appended them. Each record is written with a
// single write call and ends in a newline, so a process killed mid-run
// leaves a file that Load reads up to the last complete message; a torn
// final line is ignored. The format is versioned so a later resume can read
// old files.
package session
