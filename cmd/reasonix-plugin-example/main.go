package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// version is set at link time by the Makefile's -X main.version.
var version = "dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is main without the process: arguments and streams in, exit code out.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("reasonix-plugin-example", flag.ContinueOnError)
	fs.SetOutput(stderr)
	httpAddr := fs.String("http", "", "serve streamable HTTP on this loopback `ADDR` (host:port) instead of stdio")
	showVersion := fs.Bool("version", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *showVersion {
		fmt.Fprintln(stdout, version)
		return 0
	}
	srv := &server{info: implementation{Name: "reasonix-plugin-example", Version: version}}
	var err error
	if *httpAddr != "" {
		// Only the HTTP server shuts down on a signal; in stdio mode the
		// default action (exit) is right, and the end of stdin is the
		// usual way to stop.
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		err = serveHTTP(ctx, *httpAddr, srv, stdout)
	} else {
		err = serveStdio(context.Background(), srv, stdin, stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "reasonix-plugin-example: %v\n", err)
		return 1
	}
	return 0
}
