package manifests

import (
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
)

// Allows reports whether, for each verb, some rule grants it on resource of
// group.
func Allows(rules []rbacv1.PolicyRule, group, resource string, verbs ...string) bool {
	for _, verb := range verbs {
		if !slices.ContainsFunc(rules, func(r rbacv1.PolicyRule) bool { return grants(r, group, resource, verb) }) {
			return false
		}
	}
	return true
}

// OnlyNamed reports whether some rule grants verb on resource and every rule
// that does is restricted to resourceNames [name].
func OnlyNamed(rules []rbacv1.PolicyRule, group, resource, verb, name string) bool {
	granted := false
	for _, r := range rules {
		if grants(r, group, resource, verb) {
			if !slices.Equal(r.ResourceNames, []string{name}) {
				return false
			}
			granted = true
		}
	}
	return granted
}

func grants(r rbacv1.PolicyRule, group, resource, verb string) bool {
	return slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb)
}
