// Command pacer is a load generator for Redis and every RESP server. See
// the README for the commands, flags and output formats.
package main

import "os"

func main() { os.Exit(Main(os.Args, os.Stdout, os.Stderr)) }
