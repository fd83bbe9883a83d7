package main

import "io"

func demoMain(args []string, stdout, stderr io.Writer) int { return 0 }
