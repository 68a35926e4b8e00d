// Command hello is the tiny program hack/images' tests put into images: it
// needs only the runtime, so cross-compiling it for every platform is cheap.
package main

func main() { println("hello from an isamatch test image") }
