"""Screening algorithms as plain Python modules (no Django imports), tested without a database."""
