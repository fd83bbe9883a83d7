// Package mcpserver serves dsh session references to AI agents over the
// Model Context Protocol (github.com/modelcontextprotocol/go-sdk): tools to
// search sessions, prepare a prompt and read one session, a resource
// template for dsh-session: URIs and the recent sessions as resources.
//
// Everything is computed by package reference over a reference.Source
// (normally a sessionstore.Indexed), exactly as the language server and the
// command line compute it: candidates are ranked as completion ranks them,
// dsh_prepare returns dsh's exact context message, and dsh_read_session
// returns the context message a mention of that one session would add. The
// store is only read.
//
// Errors carry dsh's SESSION_REFERENCE_* code: a tool answers with a result
// whose isError is true, whose text starts with the code and whose
// structuredContent is {"error":{"code","message"}} (the command line's error
// object); a resource read fails with a JSON-RPC error whose data holds
// {"code","uri"}.
package mcpserver
