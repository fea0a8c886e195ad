"""The room, a feature folder: the web page teammates and the owner use from a phone, and how it is reached from other
machines. Each module sits in the layer of what it does (desktop/README.md): `sql` (store: sign-ins and codes),
`signins` (core: codes exchanged for a cookie), `routes` (api: the page, sign-in and out, links), `listener` and
`certificate` (where the room is reached: loopback, or HTTPS on an address the owner chose)."""
