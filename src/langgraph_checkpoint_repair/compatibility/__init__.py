"""What the installed LangGraph offers, found by feature (`features`): the one place the
package meets the differences between the LangGraph versions it supports."""
