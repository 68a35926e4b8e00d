// Package configfile writes the configuration files the suites, the demo
// and the bench start the webhook and the labeler binaries with: Webhook
// and Labeler take the component's defaults (internal/config), apply the
// caller's typed change and write the file --config then names. It is
// apart from internal/testbed because internal/config links packages of
// pkg/ whose own tests use testbed.
package configfile
