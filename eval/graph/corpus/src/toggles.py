"""Rules for turning code paths on and off."""

import hashlib


class Switchboard:
    def __init__(self, rules, ttl=60):
        self.rules = rules
        self.ttl = ttl

    def is_on(self, name, customer):
        rule = self.rules.get(name)
        if rule is None:
            return False
        return customer in rule.allow or bucket(customer) < rule.percent


def bucket(customer):
    digest = hashlib.sha1(customer.encode()).hexdigest()
    return int(digest[:4], 16) % 100
