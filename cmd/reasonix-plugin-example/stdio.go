package main

import (
	"bufio"
	"context"
	"errors"
	"io"
)

// maxMessage caps one incoming line.
const maxMessage = 4 << 20

// serveStdio answers one JSON message per line until stdin ends. Requests
// are answered in order; output is written only by this loop, so lines
// never interleave. Logs would go to stderr, never stdout.
func serveStdio(ctx context.Context, srv *server, stdin io.Reader, stdout io.Writer) error {
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 64<<10), maxMessage)
	w := bufio.NewWriter(stdout)
	for sc.Scan() {
		if ctx.Err() != nil {
			return nil
		}
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		if reply := srv.handle(line); reply != nil {
			_, _ = w.Write(reply)
			_ = w.WriteByte('\n')
			if err := w.Flush(); err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}
