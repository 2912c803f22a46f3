/** The product's name and version, as the server and the CLI report them. */
export const NAME = "crossbook"
export const VERSION = "0.1.0"
