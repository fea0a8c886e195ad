"""The room: the web page teammates and the owner use from a phone, and how it is reached from other machines."""
