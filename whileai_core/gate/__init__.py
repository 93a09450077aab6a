"""The CI regression gate without pytest: the versioned run document, and the gate between two of them."""
