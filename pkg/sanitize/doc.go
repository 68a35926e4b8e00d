// Package sanitize makes untrusted text fit to show users: [Line] turns any
// string (a registry's error, an image reference from a pod, a plugin's
// stderr) into one line of printable, valid UTF-8 within a byte bound, as
// admission warnings, annotations and Events need. It imports nothing
// beyond the standard library, so every package that shows text can use it.
package sanitize
