// Package podscope is what isamatch's descheduler plugins share about the
// pods a profile may consider: the namespaces and label selector of their
// arguments, copied deeply and turned into descheduler's pod filter.
package podscope
