// Package main is isactl, the command-line face of package isa (see main.go
// for the commands); its entry point is run, which tests call directly.
package main
